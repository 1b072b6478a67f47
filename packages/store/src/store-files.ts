import { STAGE_FILE } from './ingest-stage.ts';
import { ROLLUP_FILE } from './rollup-database.ts';

/** The main database file in a data dir. */
export const MAIN_FILE = 'governor.duckdb';

/**
 * The database files of a data dir (each with its WAL beside it): one store in three files, copied
 * or backed up together.
 */
export const STORE_FILES = [MAIN_FILE, ROLLUP_FILE, STAGE_FILE] as const;
