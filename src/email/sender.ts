import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { withoutAddresses } from '../core/redact';
import { PermanentEmailError } from '../core/errors';

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  /** The same key on every attempt: the Idempotency-Key for APIs, the Message-ID for SMTP. */
  idempotencyKey: string;
}

export interface EmailSender {
  /** Where messages go, for the banner: `Resend (https://api.resend.com)`. */
  readonly description: string;
  /** Sends once per idempotency key; returns the provider's message ID. */
  send(message: EmailMessage): Promise<{ id: string }>;
}

/** A stable RFC 5322 Message-ID from the key, so a resend after a crash is recognisable. */
export function messageIdFor(idempotencyKey: string): string {
  return `<${idempotencyKey.replace(/[^A-Za-z0-9._:-]/g, '_')}@durable-webhooks>`;
}

/** Resend's API with its Idempotency-Key header; RESEND_BASE_URL points the SDK elsewhere. */
export function resendSender(options: { apiKey: string; from: string; baseUrl?: string }): EmailSender {
  const resend = new Resend(options.apiKey, { baseUrl: options.baseUrl });
  return {
    description: `Resend (${options.baseUrl ?? 'https://api.resend.com'})`,
    async send({ to, subject, text, idempotencyKey }) {
      const { data, error } = await resend.emails.send({ from: options.from, to, subject, text }, { idempotencyKey });
      if (error) {
        const status = (error as { statusCode?: number | null }).statusCode ?? 0;
        const message = `Resend refused the email: ${error.name}: ${withoutAddresses(error.message)}`;
        // 409 concurrent_idempotent_requests and 429 clear up on their own; other 4xx do not.
        if (status >= 400 && status < 500 && status !== 429 && error.name !== 'concurrent_idempotent_requests') throw new PermanentEmailError(message);
        throw new Error(message);
      }
      return { id: data!.id };
    },
  };
}

/** SMTP with a Message-ID derived from the key; receivers and threading use it to spot a repeat. */
export function smtpSender(options: { url: string; from: string }): EmailSender {
  const transport = nodemailer.createTransport(options.url);
  return {
    description: `SMTP (${new URL(options.url).host})`,
    async send({ to, subject, text, idempotencyKey }) {
      const messageId = messageIdFor(idempotencyKey);
      try {
        await transport.sendMail({ from: options.from, to, subject, text, messageId });
      } catch (error) {
        throw smtpFailure(error);
      }
      return { id: messageId };
    },
  };
}

/**
 * An SMTP failure without the recipient: servers quote it in their replies (`550 5.1.1 <alice@…>:
 * Recipient address rejected`), and the error would carry it into Temporal, logs and spans. The
 * reply's codes stay. A 5xx to the envelope or the message will not change on retry: permanent. A 4xx,
 * a refused login (fixed by configuration) or a lost connection is retried.
 */
function smtpFailure(error: unknown): Error {
  const { code, responseCode, response } = error as { code?: unknown; responseCode?: unknown; response?: unknown };
  if (typeof responseCode !== 'number') return new Error(`SMTP failed: ${withoutAddresses(error instanceof Error ? error.message : String(error))}`);
  const enhanced = typeof response === 'string' ? /^\d{3}[ -](\d\.\d{1,3}\.\d{1,3})\b/.exec(response)?.[1] : undefined;
  const reply = `${responseCode}${enhanced ? ` ${enhanced}` : ''}${typeof code === 'string' ? ` (${code})` : ''}`;
  if (responseCode >= 500 && (code === 'EENVELOPE' || code === 'EMESSAGE')) return new PermanentEmailError(`The SMTP server refused the email: ${reply}.`);
  return new Error(`The SMTP server did not take the email: ${reply}.`);
}

/** Development: each message written as an .eml file, one per key, for a person to open. */
export function captureSender(options: { dir: string; from: string }): EmailSender {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    description: `captured as .eml files in ${options.dir}`,
    async send({ to, subject, text, idempotencyKey }) {
      const messageId = messageIdFor(idempotencyKey);
      const info = await transport.sendMail({ from: options.from, to, subject, text, messageId });
      mkdirSync(options.dir, { recursive: true });
      writeFileSync(path.join(options.dir, `${idempotencyKey.replace(/[^A-Za-z0-9._-]/g, '_')}.eml`), info.message as Buffer);
      return { id: messageId };
    },
  };
}
