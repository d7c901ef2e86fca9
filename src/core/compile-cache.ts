import { enableCompileCache } from 'node:module';

/**
 * Node's on-disk cache of compiled code (in `os.tmpdir()/node-compile-cache`), for the processes we
 * start: each entry point imports this first, so the cache is on before the rest of it loads. A
 * CLI command then starts in about two thirds of the time (most of its start is compiling the
 * Temporal client, protobufs and the rest), and a receiver or worker restarts sooner. Where that
 * folder cannot be written (a read-only root filesystem) Node goes on without it;
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 */
enableCompileCache();
