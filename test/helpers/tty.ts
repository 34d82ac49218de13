/** Runs `fn` with `process.stderr.isTTY` set to `value` (a terminal or not, as far as progress bars can tell), then restores it. */
export async function withStderrTTY(value: boolean, fn: () => Promise<unknown>): Promise<void> {
  const tty = Object.getOwnPropertyDescriptor(process.stderr, "isTTY");
  Object.defineProperty(process.stderr, "isTTY", { value, configurable: true });
  try {
    await fn();
  } finally {
    if (tty) Object.defineProperty(process.stderr, "isTTY", tty);
    else delete (process.stderr as { isTTY?: boolean }).isTTY;
  }
}
