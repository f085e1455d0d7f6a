-- A fixed SQL workload for the sqlite shape of scripts/bench-gate, run by
-- the sqlite3 CLI on :memory: with kp_slowhash loaded and @kp_slow (percent
-- more rows for kp_slowhash; unset: 0) set: inserts into indexed tables,
-- joins, GROUP BY, LIKE scans, ORDER BY, and kp_slowhash over a fraction
-- of the rows. Every value is computed, so every run does the same work.
PRAGMA cache_size = -131072;
CREATE TABLE cats(id INTEGER PRIMARY KEY, label TEXT NOT NULL);
CREATE TABLE items(id INTEGER PRIMARY KEY, cat INTEGER NOT NULL, name TEXT NOT NULL,
                   price REAL NOT NULL, payload TEXT NOT NULL);
CREATE INDEX items_cat_price ON items(cat, price);
CREATE INDEX items_name ON items(name);
CREATE TABLE orders(id INTEGER PRIMARY KEY, item INTEGER NOT NULL, qty INTEGER NOT NULL);
CREATE INDEX orders_item ON orders(item);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
INSERT INTO cats SELECT i, printf('category-%03d-%s', i, substr('abcdefghij', i % 7 + 1, 3)) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
INSERT INTO items
SELECT i, (i * 7919) % 300 + 1,
       printf('item %08x %s', (i * 2654435761) % 4294967296, substr('qwertyuiopasdfghjkl', i % 13 + 1, 5)),
       ((i * 48271) % 100000) / 100.0,
       printf('%0*d|%s|%x', 40 + i % 80, i, substr('lorem ipsum dolor sit amet consectetur', i % 20 + 1, 18), i * 31)
FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
INSERT INTO orders SELECT i, (i * 104729) % 40000 + 1, i % 9 + 1 FROM n;
SELECT c.label, count(*), round(sum(i.price * o.qty), 2)
FROM orders o JOIN items i ON i.id = o.item JOIN cats c ON c.id = i.cat
GROUP BY c.label ORDER BY 3 DESC LIMIT 3;
SELECT count(*) FROM items WHERE name LIKE '%a7%' OR payload LIKE '%dolor%3%';
SELECT cat, count(*), max(price) FROM items WHERE price BETWEEN 100 AND 400 GROUP BY cat ORDER BY 2 DESC LIMIT 3;
SELECT id, name FROM items ORDER BY payload DESC LIMIT 2 OFFSET 5000;
SELECT sum(kp_slowhash(payload) % 1000) FROM items
WHERE id % 1000 < 150 * (100 + coalesce(@kp_slow, 0)) / 100;
