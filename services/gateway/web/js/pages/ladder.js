import { fill, h } from "../ui.js";
export function mountLadder(root, ladder) { fill(root, h("p", {}, `Ladder ${ladder}`)); }
