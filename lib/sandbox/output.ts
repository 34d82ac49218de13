/** Captured console text of one sandbox run, bounded so a runaway `console.log` cannot exhaust the host. */
export class OutputBuffer {
  private readonly parts: string[] = [];
  private length = 0;
  private truncated = false;

  constructor(private readonly maxChars: number) {}

  /** True once the limit is reached; later writes are dropped cheaply. */
  get full(): boolean {
    return this.truncated;
  }

  /** Appends one console line. */
  write(text: string): void {
    if (this.truncated) return;
    const line = `${text}\n`;
    const room = this.maxChars - this.length;
    if (line.length <= room) {
      this.parts.push(line);
      this.length += line.length;
      return;
    }
    this.parts.push(line.slice(0, Math.max(0, room)));
    this.length = this.maxChars;
    this.truncated = true;
  }

  toString(): string {
    const text = this.parts.join("");
    return this.truncated ? `${text}\n[output truncated at ${this.maxChars} characters]\n` : text;
  }
}
