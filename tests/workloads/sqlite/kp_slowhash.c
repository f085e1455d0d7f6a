/* A loadable SQLite extension for the sqlite shape of scripts/bench-gate:
 * kp_slowhash(X), a hash of X's bytes mixed over and over, a function of
 * ours whose cost is linear in the rows it is called on, inside the real
 * sqlite3 (the Debian CLI and library) running sqlbench.sql, which calls it
 * on more rows as the knob asks. Built only where sqlite3ext.h is. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <stddef.h>
#include <stdint.h>

/* The rounds over each value: about a tenth of the script's time. */
enum { KP_SLOWHASH_ROUNDS = 24 };

/* The SQL function's body: its own frame, its name in the profile. */
__attribute__((noinline)) static void kp_slowhash_kprof(sqlite3_context *ctx, int argc,
							sqlite3_value **argv)
{
	const unsigned char *p;
	uint64_t h = 0x9e3779b97f4a7c15u;
	int n;

	(void)argc;
	p = sqlite3_value_blob(argv[0]);
	n = sqlite3_value_bytes(argv[0]);
	for (int r = 0; r < KP_SLOWHASH_ROUNDS; r++)
		for (int i = 0; i < n; i++) {
			h ^= p[i];
			h *= 0x100000001b3u;
			h ^= h >> 29;
		}
	sqlite3_result_int64(ctx, (sqlite3_int64)(h >> 1));
}

/* SQLite's entry point for `.load FILE sqlite3_kpslowhash_init`. */
int sqlite3_kpslowhash_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);
int sqlite3_kpslowhash_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	(void)err;
	SQLITE_EXTENSION_INIT2(api);
	return sqlite3_create_function(db, "kp_slowhash", 1,
				       SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
				       kp_slowhash_kprof, NULL, NULL);
}
