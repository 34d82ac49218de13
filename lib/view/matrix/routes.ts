// The matrix's addresses: `/matrix?runs=a,b,c[&disagree=1][&page=N][&size=N]`, `/matrix/tests?runs=…`,
// and the same data as JSON under `/api/matrix` and `/api/matrix/tests`. The data is matrix.ts's, the
// pages page.ts's; routes.ts hands these paths here with the page and size it read.
import { page } from "../html.js";
import { Matrices, matrixRunIds } from "./matrix.js";
import { matrixPage, matrixTestsPage } from "./page.js";

/** The matrix pages and JSON of one store. */
export class MatrixRoutes {
  constructor(readonly matrices: Matrices) {}

  /** The page at /matrix/`parts` (none: the matrix; `tests`: the pairwise tests); undefined for another path. */
  async page(parts: string[], q: URLSearchParams, paging: { limit: number; offset: number }, signal?: AbortSignal): Promise<string | undefined> {
    const store = this.matrices.store.path;
    if (parts.length === 0) return page("Matrix", store, matrixPage(await this.matrices.page(matrixRunIds(q), { disagree: flag(q, "disagree"), ...paging }, signal)));
    if (parts.length === 1 && parts[0] === "tests") return page("Pairwise tests", store, matrixTestsPage(await this.matrices.tests(matrixRunIds(q), signal)));
    return undefined;
  }

  /** The JSON at /api/matrix/`parts`; undefined for another path. */
  async api(parts: string[], q: URLSearchParams, paging: { limit: number; offset: number }, signal?: AbortSignal): Promise<unknown> {
    if (parts.length === 0) return this.matrices.page(matrixRunIds(q), { disagree: flag(q, "disagree"), ...paging }, signal);
    if (parts.length === 1 && parts[0] === "tests") return this.matrices.tests(matrixRunIds(q), signal);
    return undefined;
  }
}

function flag(q: URLSearchParams, key: string): boolean {
  const v = q.get(key);
  return v === "1" || v === "true";
}
