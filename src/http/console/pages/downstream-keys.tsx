import type { EventView } from '../../../temporal/event-view';

/** Every call outside our database this event made, with the Idempotency-Key it carried. */
export function DownstreamKeys({ view }: { view: EventView | undefined }) {
  const steps = view?.ledger?.steps.filter((step) => step.idempotencyKey !== null) ?? [];
  const charges = view?.ledger?.charges ?? [];
  if (steps.length === 0 && charges.length === 0) return <p className="muted">No call with an Idempotency-Key is recorded for this event.</p>;
  return (
    <table className="keys">
      <thead>
        <tr>
          <th>Step</th>
          <th>Idempotency-Key</th>
          <th>Made</th>
          <th>Outcome</th>
        </tr>
      </thead>
      <tbody>
        {charges.map((charge) => (
          <tr key={`charge:${charge.attempt}`}>
            <td>charge, attempt {charge.attempt}</td>
            <td>
              <code className="key">{charge.idempotencyKey}</code>
            </td>
            <td>{charge.paymentIntentId ?? '-'}</td>
            <td>
              {charge.outcome}
              {charge.failure && `: ${charge.failure.message}`}
            </td>
          </tr>
        ))}
        {steps.map((step) => (
          <tr key={step.step}>
            <td>{step.step}</td>
            <td>
              <code className="key">{step.idempotencyKey}</code>
            </td>
            <td>{step.externalId ?? '-'}</td>
            <td>{step.pending ? 'pending: called, its answer not recorded' : 'done'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
