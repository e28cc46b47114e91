/** A decoder's refusal as the page shows it: a code (Sgfp4Error's, or BACKEND_FAILURE) and the message. */
import { describeError } from "@sgfp4/conformance/core";

export class DecodeFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = "DecodeFailure";
    this.code = code;
  }
}

/** Anything a decoder threw, as a DecodeFailure; an error without a code is a BACKEND_FAILURE. */
export function toFailure(e: unknown): DecodeFailure {
  if (e instanceof DecodeFailure) return e;
  const d = describeError(e);
  return new DecodeFailure(d.code ?? "BACKEND_FAILURE", d.message);
}
