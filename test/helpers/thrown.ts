/**
 * The error `fn()` throws, checked to be an instance of `errorClass`. The class is passed in because
 * tests of the built package and tests of the sources each have their own `ValidationError`.
 */
import { expect } from "@jest/globals";

export function thrownBy<E extends Error>(errorClass: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(errorClass);
    return error as E;
  }
  throw new Error(`expected a ${errorClass.name}, nothing was thrown`);
}
