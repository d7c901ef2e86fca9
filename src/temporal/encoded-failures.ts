import { DefaultFailureConverter } from '@temporalio/common';

/**
 * The failure converter every client and worker loads (`failureConverterPath`) while
 * PAYLOAD_ENCRYPTION_KEYS is set: a failure's message and stack trace move into its encoded
 * attributes, which the codec encrypts like any payload. History then shows `Encoded failure`, and
 * an error that quotes what it was given (an SMTP reply naming its recipient) is ciphertext too.
 * Sandbox-safe: `npm run dev` bundles it into the workflows.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
