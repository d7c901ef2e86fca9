/** The workflow bundle's entry: every workflow the worker runs, one file each. */
export { recordEvent } from './record-event';
