-- Tributary catalog, schema version 3: every object has its keys' rows.
--
-- Schema 2 made a key's row when a write first claimed it, so what schema 1 had written
-- may exist with no row under its keys. Writers now take a key without a row to mean
-- that nothing was ever written under it (a new table's name is guessed free, and the
-- write claims it as such), so the rows of everything written before are made here.
INSERT INTO tributary_keys (key, version)
SELECT DISTINCT key, 1 FROM (
    SELECT 'p:' || id FROM tributary_profiles
    UNION ALL SELECT 'pn:' || name_key FROM tributary_profiles
    UNION ALL SELECT 't:' || id FROM tributary_tables
    UNION ALL SELECT 'tn:' || name_key FROM tributary_tables
    UNION ALL SELECT 'd:' || key FROM tributary_definitions
    UNION ALL SELECT 'rd:' || dependency FROM tributary_readers
) AS everything (key)
ON CONFLICT (key) DO NOTHING;
