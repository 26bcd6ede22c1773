import { fill, h } from "../ui.js";
export function mountPlayer(root, id) { fill(root, h("p", {}, `Player ${id}`)); }
