/**
 * A simulated vision model for the bundled `shapes` task (count the shapes in a picture), for tests,
 * notebooks and offline runs. It "sees" a picture only through a table it is given: the sha256 of each
 * picture's bytes → the number of shapes in it (the dataset's own labels). It finds the pictures in
 * the messages it is sent, whatever their form (an Image value, base64 or a data URL, the bytes
 * written out as JSON numbers, or a `sha256` in the text); the last picture is the one to count,
 * the earlier ones are the demos' pictures. Its counting is imperfect in a fixed, documented way:
 *
 * - a picture of 1 or 2 shapes is always counted right;
 * - otherwise it misses shapes with probability t (drawn as u, a number in [0, 1) from the picture's
 *   hash, so the same picture fails the same way every time): t = 0.7 without help; 0.3 when the
 *   instruction says to count "one by one"; times 0.6 with one demo picture of 5 or more shapes in the
 *   prompt and times 0.35 with two or more such "crowded" demos;
 * - a miss answers count − 1, or count − 2 when u < t/3 and the instruction does not say "one by one".
 *
 * Without an instruction or demos it scores about 0.55 on the dataset; with the phrase and two crowded
 * demos about 0.93. Prompts without a picture (MIPROv2's proposer, GEPA's reflection) are answered as
 * `SimulatedLM` answers them (as is any prompt whose outputs have no `count` field), with two rules: the proposer hands out one of six instructions by the
 * call's rolloutId (two of them say "one by one"), and GEPA's reflection answers with a "one by one"
 * instruction when its evidence shows an under-count, else with the current instruction.
 */
import type { ChatOptions, LMRequest, LMResponse } from "../lm/types.js";
import { nodeCrypto } from "../load-sync.js";
import { MediaValue } from "../media/media.js";
import { readPrompt, type ReadPrompt } from "./read-prompt.js";
import { estimatedResponse, writeReply } from "./reply.js";
import { SimulatedLM, type SimulatedLMOptions, type SimulatedRule } from "./simulated-lm.js";

/** The phrase that makes the simulated model count carefully. */
export const SHAPES_CAREFUL_PHRASE = "one by one";

/** The instructions the simulated proposer hands out, by `rolloutId % 6`; two hold the careful phrase. */
export const SHAPES_PROPOSALS: readonly string[] = [
  "Count the shapes in the picture.",
  "Look at the picture and say how many shapes it holds.",
  `Count the shapes ${SHAPES_CAREFUL_PHRASE}: point at each circle, square and triangle in turn, then give the total.`,
  "Estimate the number of coloured shapes on the white background.",
  "Give the number of circles, squares and triangles together.",
  `Go over the picture ${SHAPES_CAREFUL_PHRASE}, row by row, and count every shape you pass.`,
];

/** Options of `new SimulatedShapesLM(options)`: the pictures' counts by sha256, and SimulatedLM's options. */
export interface SimulatedShapesLMOptions extends SimulatedLMOptions {
  /** sha256 (hex) of each picture's bytes → its number of shapes; see `shapesTable`. */
  counts: ReadonlyMap<string, number>;
}

/** What the simulated model read from a prompt holding pictures, and how it counted. */
export interface ShapesDecision {
  /** The picture counted (sha256), and the demos' pictures seen before it. */
  picture: string;
  demoPictures: string[];
  careful: boolean;
  crowdedDemos: number;
  /** The probability of a miss for this picture, and the picture's u. */
  threshold: number;
  u: number;
}

/** The counts table from examples whose input `image` is an Image and whose output is `count`. */
export function shapesTable(examples: readonly { input: Record<string, unknown>; output: Record<string, unknown> }[]): Map<string, number> {
  const table = new Map<string, number>();
  for (const e of examples) {
    const image = e.input.image;
    if (image instanceof MediaValue && image.bytes !== undefined && typeof e.output.count === "number") table.set(image.sha256, e.output.count);
  }
  return table;
}

const sha256 = (bytes: Uint8Array) => nodeCrypto().createHash("sha256").update(bytes).digest("hex");

/** PNG bytes written as JSON numbers (`{"0":137,"1":80,…}` or `[137,80,…]`), base64 of a PNG, and sha256 texts. */
const NUMBERS = /\{"0":137,"1":80,"2":78,"3":71(?:,"\d+":\d+)*\}|\[137,80,78,71(?:,\d+)*\]/g;
const BASE64_PNG = /iVBORw0KGgo[A-Za-z0-9+/]+={0,2}/g;
const SHA = /sha256"?\s*[:=]\s*"?([0-9a-f]{12,64})/g;

/** Every picture in `text`, as [position, sha256 or sha256 prefix]. */
function picturesInText(text: string): [number, string][] {
  const found: [number, string][] = [];
  for (const m of text.matchAll(NUMBERS)) {
    const numbers = m[0].startsWith("[") ? (JSON.parse(m[0]) as number[]) : Object.values(JSON.parse(m[0]) as Record<string, number>);
    found.push([m.index, sha256(Uint8Array.from(numbers))]);
  }
  for (const m of text.matchAll(BASE64_PNG)) found.push([m.index, sha256(Buffer.from(m[0], "base64"))]);
  for (const m of text.matchAll(SHA)) found.push([m.index, m[1]!]);
  return found.sort((a, b) => a[0] - b[0]);
}

/** Every picture in the messages, in order, as sha256 texts (or prefixes of 12 or more hex digits). */
export function picturesIn(value: unknown, out: string[] = []): string[] {
  if (value instanceof MediaValue) {
    if (value.bytes !== undefined) out.push(value.sha256);
  } else if (typeof value === "string") {
    for (const [, sha] of picturesInText(value)) out.push(sha);
  } else if (value instanceof Uint8Array) {
    out.push(sha256(value));
  } else if (Array.isArray(value)) {
    for (const v of value) picturesIn(v, out);
  } else if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) picturesIn(v, out);
  }
  return out;
}

/** The number of shapes the simulated model sees in a picture, and why (see the file's header). */
export function simulatedCount(count: number, hash: string, careful: boolean, crowdedDemos: number): { answer: number; threshold: number; u: number } {
  const u = parseInt(hash.slice(0, 8), 16) / 2 ** 32;
  const threshold = (careful ? 0.3 : 0.7) * [1, 0.6, 0.35][Math.min(crowdedDemos, 2)]!;
  if (count <= 2 || u >= threshold) return { answer: count, threshold, u };
  return { answer: count - 1 - (!careful && u < threshold / 3 ? 1 : 0), threshold, u };
}

/** The proposer and reflection rules of the simulated shapes model. */
function shapesRules(): SimulatedRule[] {
  return [
    {
      phrase: "propose a new instruction",
      answer: (_inputs, sampling) => ({ proposedInstruction: SHAPES_PROPOSALS[Number(sampling.rolloutId ?? 0) % SHAPES_PROPOSALS.length]! }),
    },
    {
      phrase: "Write a new instruction for the assistant",
      answer: (inputs) => {
        const text = String(inputs.examplesWithFeedback ?? "");
        const under = [...text.matchAll(/"count":(\d+)\}; the program's outputs: \{"count":(\d+)/g)].some((m) => Number(m[1]) > Number(m[2]));
        return { newInstruction: under ? SHAPES_PROPOSALS[2]! : String(inputs.currentInstruction ?? "") };
      },
    },
  ];
}

/** The simulated vision model of the `shapes` task (the rules it counts by are in this file's header). */
export class SimulatedShapesLM extends SimulatedLM {
  readonly #counts: ReadonlyMap<string, number>;
  /** Every prompt with a picture, in order, with how the model counted it. */
  readonly counted: ShapesDecision[] = [];

  constructor(options: SimulatedShapesLMOptions) {
    super({ model: "simulated-shapes", ...options, rules: [...shapesRules(), ...(options.rules ?? [])] });
    this.#counts = options.counts;
  }

  /** The count of a picture by its sha256 (or a prefix of 12 or more hex digits), or undefined when it is not in the table. */
  #count(sha: string): [string, number] | undefined {
    const exact = this.#counts.get(sha);
    if (exact !== undefined) return [sha, exact];
    if (sha.length < 12 || sha.length === 64) return undefined;
    for (const [full, count] of this.#counts) if (full.startsWith(sha)) return [full, count];
    return undefined;
  }

  /** Counts the last known picture of the prompt, as the header says; a prompt without one is SimulatedLM's. */
  protected override async complete(request: LMRequest, options: ChatOptions = {}): Promise<LMResponse> {
    let read: ReadPrompt | undefined;
    try {
      read = readPrompt(request.messages);
    } catch {
      read = undefined;
    }
    // Only a prompt asking for a `count` is counted: a proposer's or a reflection's may name pictures too.
    // (A prompt whose output fields could not be read at all is still looked at for pictures.)
    if (read !== undefined && Object.keys(read.outputs).length > 0 && !("count" in read.outputs)) return super.complete(request, options);
    const pictures = picturesIn(request.messages).flatMap((sha) => { const c = this.#count(sha); return c === undefined ? [] : [c]; });
    if (pictures.length === 0) return super.complete(request, options);
    const instruction = (read?.instruction ?? request.messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n")).toLowerCase();
    const [picture, count] = pictures.at(-1)!;
    // A picture named twice in a row (a label beside its bytes) is one picture; the one counted is no demo.
    const demos = pictures.slice(0, -1).filter(([sha], i, all) => sha !== picture && sha !== all[i - 1]?.[0]);
    const careful = instruction.includes(SHAPES_CAREFUL_PHRASE);
    const crowdedDemos = new Set(demos.filter(([, c]) => c >= 5).map(([sha]) => sha)).size;
    const seen = simulatedCount(count, picture, careful, crowdedDemos);
    this.counted.push({ picture, demoPictures: demos.map(([sha]) => sha), careful, crowdedDemos, threshold: seen.threshold, u: seen.u });
    const content = writeReply({ count: seen.answer }, request.responseSchema !== undefined, this.dataFormat);
    return estimatedResponse(request.messages, content, this.provider, this.model);
  }
}
