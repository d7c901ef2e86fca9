/**
 * The idempotency layer Stripe and Resend describe: the first request with a key stores its
 * response; a repeat with the same parameters gets that response again, flagged as replayed; a repeat
 * with other parameters, or one while the first is still running, is refused.
 */
export interface StoredResponse {
  status: number;
  body: unknown;
}

type Entry = { fingerprint: string; response?: StoredResponse };

export type IdempotencyOutcome =
  | { kind: 'new'; finish(response: StoredResponse): void; abandon(): void }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch' }
  | { kind: 'in-flight' };

export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();

  /** Forgets every key, as Stripe does 24 hours after a key's first use. */
  forgetAll(): void {
    this.entries.clear();
  }

  begin(key: string, fingerprint: string): IdempotencyOutcome {
    const entry = this.entries.get(key);
    if (!entry) {
      const fresh: Entry = { fingerprint };
      this.entries.set(key, fresh);
      return {
        kind: 'new',
        finish: (response) => (fresh.response = response),
        abandon: () => this.entries.delete(key),
      };
    }
    if (entry.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (!entry.response) return { kind: 'in-flight' };
    return { kind: 'replay', response: entry.response };
  }
}
