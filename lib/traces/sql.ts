/**
 * The few statements traces need beyond the lab store's API (feedback, the last index of a run,
 * pruning), on either engine: the SQLite file's shared connection or the PostgreSQL pool of the
 * store's URL. Placeholders are written `?` and numbered for PostgreSQL here.
 */
import { openStoreSync } from "../store/db.js";
import type { Lab } from "../store/lab-store.js";

/** Runs `sql` with `params` on `lab`'s database and returns the rows (for a statement without rows, []). */
export async function labQuery<T>(lab: Lab, sql: string, params: unknown[] = []): Promise<T[]> {
  if (lab.engine === "sqlite") {
    const statement = openStoreSync(lab.path).prepare(sql);
    return statement.reader ? (statement.all(...params) as T[]) : (statement.run(...params), []);
  }
  await lab.flush();
  const { postgresPool } = await import("../store/pg.js");
  const { pool, ready } = postgresPool(lab.url);
  await ready;
  let n = 0;
  return (await pool.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as T[];
}
