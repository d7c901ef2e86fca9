import express, { type Request, type RequestHandler, type Response } from 'express';
import {
  BodyTooSlowError,
  PayloadTooLargeError,
  TooManyLargeBodiesError,
  TooManyLargeBodiesFromAddressError,
  UnsupportedContentEncodingError,
} from '../core/delivery-errors';
import type { BodyLimits } from '../config';

/**
 * What a delivery must pass before and while its body is read, in this order: refused unread when
 * compressed or declared too long (`refuseBeforeReading`); one of few large bodies at a time, and few
 * from one address (`limitLargeBodies`); fast enough to arrive in time (`enforceBodyPace`); then read
 * whole, uninflated, up to the limit (`readRawBody`). `refuse` answers a body cut while it was read.
 * The limit is the request's own (`limitOf`: its source's) under `maxBodyBytes`.
 */
export function bodyGuards(
  { maxBodyBytes, largeBodies, bodyPace: pace }: BodyLimits,
  refuse: (error: Error, req: Request, res: Response) => void,
  limitOf: (res: Response) => number = () => maxBodyBytes,
) {
  const limit = (res: Response) => Math.min(maxBodyBytes, limitOf(res));
  let largeBodiesInFlight = 0;
  const largeBodiesByAddress = new Map<string, number>();
  const limitLargeBodies: RequestHandler = (req, res, next) => {
    const length = Number(req.headers['content-length'] ?? Number.NaN);
    if (length <= largeBodies.thresholdBytes) return next();
    // A share per client address, so a few slow or hostile senders cannot hold every slot. Either
    // refusal is answered unread.
    const address = req.ip ?? 'unknown';
    const fromAddress = largeBodiesByAddress.get(address) ?? 0;
    const refusal =
      largeBodiesInFlight >= largeBodies.maxInFlight
        ? new TooManyLargeBodiesError({ limit: largeBodies.maxInFlight })
        : fromAddress >= largeBodies.maxPerAddress
          ? new TooManyLargeBodiesFromAddressError({ limit: largeBodies.maxPerAddress })
          : undefined;
    if (refusal) throw refusal;
    largeBodiesInFlight++;
    largeBodiesByAddress.set(address, fromAddress + 1);
    res.once('close', () => {
      largeBodiesInFlight--;
      const left = largeBodiesByAddress.get(address)! - 1;
      if (left === 0) largeBodiesByAddress.delete(address);
      else largeBodiesByAddress.set(address, left);
    });
    next();
  };

  // A body that cannot arrive in time is cut as soon as that is clear, not at REQUEST_TIMEOUT: after
  // a grace of 5 s it must have averaged MIN_BODY_RATE, and (with a declared length) the pace that
  // finishes it in time. Measured on the socket's bytes, checked twice a second.
  const enforceBodyPace: RequestHandler = (req, res, next) => {
    if (req.complete) return next();
    const declared = Number(req.headers['content-length']);
    const rate = Math.max(pace.minRate, Number.isFinite(declared) ? declared / Math.max(1, (pace.timeoutMs - BODY_PACE_GRACE_MS) / 1000) : 0);
    const began = Date.now();
    const before = req.socket.bytesRead;
    const check = setInterval(() => {
      const elapsedMs = Date.now() - began;
      const received = req.socket.bytesRead - before;
      if (req.complete || elapsedMs <= BODY_PACE_GRACE_MS || received >= ((elapsedMs - BODY_PACE_GRACE_MS) / 1000) * rate) return;
      stop();
      // Answered as any refusal is (counted, logged, connection closed); then the socket goes, so
      // the body still being read ends too.
      refuse(new BodyTooSlowError({ received: received, seconds: Math.round(elapsedMs / 1000) }), req, res);
      res.once('finish', () => req.socket.destroy());
    }, BODY_PACE_CHECK_MS);
    const stop = () => clearInterval(check);
    req.once('end', stop);
    res.once('close', stop);
    next();
  };

  // A compressed body (nothing here inflates) and one declared over the limit are refused before a
  // byte of them is read.
  const refuseBeforeReading: RequestHandler = (req, res, next) => {
    const encoding = req.headers['content-encoding']?.trim().toLowerCase();
    const refusal =
      encoding && encoding !== 'identity'
        ? new UnsupportedContentEncodingError({ contentEncoding: encoding.slice(0, 100) })
        : Number(req.headers['content-length']) > limit(res)
          ? new PayloadTooLargeError({ maxBodyBytes: limit(res) })
          : undefined;
    next(refusal);
  };
  // One reader per limit (a few: one per kind and per source that sets its own), each stopping at
  // its limit while it reads a body that declared no length.
  const readers = new Map<number, RequestHandler>();
  const readRawBody: RequestHandler = (req, res, next) => {
    const bytes = limit(res);
    let reader = readers.get(bytes);
    if (!reader) readers.set(bytes, (reader = express.raw({ type: () => true, limit: bytes, inflate: false })));
    reader(req, res, next);
  };
  return { refuseBeforeReading, limitLargeBodies, enforceBodyPace, readRawBody };
}

/** Time a body has before its pace is checked, and how often it is checked. */
const BODY_PACE_GRACE_MS = 5000;
const BODY_PACE_CHECK_MS = 500;
