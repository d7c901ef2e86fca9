import * as workflows from '../../workflows';
import { SIGNALS, WorkflowType, type Workflows } from '../../contracts';

// A compile-time check (`npm run lint` type-checks the tests): every workflow the contracts name is
// exported by the worker's bundle entry with the signature clients start it with.
const implementations: Workflows = workflows;

describe('contracts', () => {
  it('names exactly the workflows the worker registers', () => {
    const exported = Object.entries(workflows)
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name);
    expect(Object.values(WorkflowType).sort()).toEqual(exported.sort());
    for (const type of Object.values(WorkflowType)) expect(implementations[type]).toBe(workflows[type]);
  });

  it('lists signals only for workflows that exist, each with a unique name', () => {
    for (const [type, signals] of Object.entries(SIGNALS)) {
      expect(Object.values(WorkflowType)).toContain(type);
      const names = signals!.map((signal) => signal.name);
      expect(new Set(names).size).toBe(names.length);
    }
  });
});
