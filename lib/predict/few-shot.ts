// FewShotExample lives with the prompt that renders demos (lib/prompt/few-shot.ts); this path stays for existing imports.
export { FewShotExample } from "../prompt/few-shot.js";
