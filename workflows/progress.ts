import { setCurrentDetails, setHandler } from '@temporalio/workflow';
import { statusQuery, type Awaiting, type EventProgress } from '../contracts';

/**
 * Where an event workflow stands: answered by the `status` query, and shown as the Temporal UI's
 * current details (steps done, what it waits for and until when, how it ended), updated at every change.
 */
export class Progress implements EventProgress {
  readonly stepsDone: string[] = [];
  waitingFor: string | null = null;
  awaiting: Awaiting | null = null;
  outcome: string | null = null;
  entity?: { flow: string; source: string; key: string };

  constructor(
    readonly eventId: string,
    readonly type: string,
  ) {
    setHandler(statusQuery, () => this);
    this.show();
  }

  done(step: string): void {
    this.stepsDone.push(step);
    this.show();
  }

  /** Starts waiting (for what, in words, and the signals that end it), or stops (`null`). */
  waitFor(what: string | null, awaiting: Awaiting | null = null): void {
    this.waitingFor = what;
    this.awaiting = what === null ? null : awaiting;
    this.show();
  }

  end(outcome: string): void {
    this.outcome = outcome;
    this.show();
  }

  private show(): void {
    setCurrentDetails(
      [
        `**Steps done:** ${this.stepsDone.join(', ') || 'none yet'}`,
        ...(this.waitingFor ? [`**Waiting for:** ${this.waitingFor}${this.awaiting?.until ? `, until ${this.awaiting.until}` : ''}`] : []),
        ...(this.outcome ? [`**Outcome:** ${this.outcome}`] : []),
      ].join('\n\n'),
    );
  }
}
