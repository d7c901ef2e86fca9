import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { ConfigError } from '../core/errors';

/** One data key of `PAYLOAD_ENCRYPTION_KEYS`. */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** The metadata of an encrypted payload: Temporal's own convention (samples' `binary/encrypted`). */
const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
/** Present on payloads whose ciphertext is bound to its namespace (associated data: key ID, then namespace). */
const NAMESPACE_BOUND_METADATA = 'encryption-namespace-bound';

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * `PAYLOAD_ENCRYPTION_KEYS`: `<keyId>:<base64 of 32 bytes>` entries separated by spaces; the first
 * encrypts, all decrypt. Errors name the entry by its key ID or position, never its key.
 */
export function parseEncryptionKeys(value: string | undefined): EncryptionKey[] {
  const keys = (value ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((entry, index) => {
      const colon = entry.indexOf(':');
      const id = colon === -1 ? '' : entry.slice(0, colon);
      if (!KEY_ID.test(id))
        throw new ConfigError(`PAYLOAD_ENCRYPTION_KEYS entry ${index + 1} must be <keyId>:<base64 key>, the key ID 1-64 of A-Z a-z 0-9 . _ -.`);
      const key = Buffer.from(entry.slice(colon + 1), 'base64');
      if (key.length !== 32 || key.toString('base64') !== entry.slice(colon + 1)) {
        throw new ConfigError(`PAYLOAD_ENCRYPTION_KEYS key "${id}" must be 32 bytes in base64 (openssl rand -base64 32).`);
      }
      return { id, key };
    });
  const ids = keys.map((key) => key.id);
  const repeated = ids.find((id, index) => ids.indexOf(id) !== index);
  if (repeated) throw new ConfigError(`PAYLOAD_ENCRYPTION_KEYS names key "${repeated}" twice.`);
  return keys;
}

export interface EncryptionCodecOptions {
  /** The namespace bound into every ciphertext: a payload copied into another namespace does not decrypt there. */
  namespace: string;
  /**
   * What a payload that is not encrypted gets on decode: `allow` (clients, the codec endpoint, and
   * workers while PAYLOAD_ENCRYPTION_ALLOW_PLAINTEXT is on for a migration) or `refuse` (workers).
   */
  plaintext: 'allow' | 'refuse';
}

/**
 * Encrypts every payload with AES-256-GCM under the first key, the key ID in the metadata; the key ID
 * and the namespace are bound to the ciphertext as associated data. Decrypts with whichever key the
 * metadata names, so keys rotate. The workflow ID is not bound: Temporal's remote codec protocol,
 * which the UI and the CLI decode through, sends no workflow ID, and memos and schedules have none.
 * Payloads written before encryption was turned on are refused by workers unless
 * PAYLOAD_ENCRYPTION_ALLOW_PLAINTEXT is on; those written before the namespace was bound still decrypt.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;

  constructor(
    private readonly keys: readonly EncryptionKey[],
    private readonly options: EncryptionCodecOptions,
  ) {
    if (keys.length === 0) throw new Error('EncryptionCodec needs at least one key.');
    this.byId = new Map(keys.map((key) => [key.id, key.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id, key } = this.keys[0]!;
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(this.associatedData(id, true));
      const plaintext = temporal.api.common.v1.Payload.encode(payload).finish();
      const data = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: Buffer.from(id), [NAMESPACE_BOUND_METADATA]: Buffer.from('true') },
        data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== ENCRYPTED_ENCODING) {
        if (this.options.plaintext === 'allow') return payload;
        throw new Error(
          'A payload is not encrypted, and PAYLOAD_ENCRYPTION_KEYS is set: refused. While payloads from before encryption are still in flight, set PAYLOAD_ENCRYPTION_ALLOW_PLAINTEXT=true on the workers.',
        );
      }
      const id = Buffer.from(payload.metadata?.[KEY_ID_METADATA] ?? []).toString();
      const key = this.byId.get(id);
      if (!key) throw new Error(`A payload is encrypted with key "${id}", which PAYLOAD_ENCRYPTION_KEYS does not hold.`);
      const data = Buffer.from(payload.data ?? []);
      if (data.length < IV_BYTES + TAG_BYTES)
        throw new Error(
          `An encrypted payload of ${data.length} bytes is shorter than its nonce and tag (${IV_BYTES + TAG_BYTES}): it was not written by this codec.`,
        );
      // The tag's length is fixed, so a shortened tag is refused rather than checked on fewer bytes.
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(this.associatedData(id, payload.metadata?.[NAMESPACE_BOUND_METADATA] !== undefined));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plaintext = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plaintext);
    });
  }

  /** The key ID, and after a zero byte the namespace when the payload is bound to it. */
  private associatedData(keyId: string, namespaceBound: boolean): Buffer {
    return Buffer.from(namespaceBound ? `${keyId}\0${this.options.namespace}` : keyId);
  }
}
