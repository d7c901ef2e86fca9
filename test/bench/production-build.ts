import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from '../support/processes';

/**
 * The production build's modules (`npm run bench` builds it first), so the bench measures the
 * receiver as `npm run receiver` runs it. tsx compiles on the fly and wraps every closure in a naming
 * helper, which made a per-item loop ten times slower than the built receiver runs it.
 */
export const built = createRequire(path.join(ROOT, 'dist/'));
