-- Tributary catalog, schema version 2: writers from many processes no longer take turns
-- on one version row.
--
-- A write's checks read the catalog through point questions (a name, an id, a
-- definition, the readers of something), each answered under a key; a write bumps the
-- keys of what it changes. Each key's version is read with its answer, and the write
-- commits only if every key it read still has that version, locking them in the same
-- statement: writes that touch no common key commit side by side.
CREATE TABLE tributary_keys (
    -- 'p:' profile id, 'pn:' profile name, 't:' table id, 'tn:' table name,
    -- 'd:' definition key, 'rd:' the readers of a definition key.
    key text COLLATE "C" PRIMARY KEY,
    version bigint NOT NULL
);

-- What caches compare: every commit adds one to one slot (its writer's), so the sum
-- grows with every commit, and writers from different processes bump different rows.
CREATE TABLE tributary_version_slots (
    slot integer PRIMARY KEY,
    version bigint NOT NULL
);
INSERT INTO tributary_version_slots (slot, version)
SELECT s, 0 FROM generate_series(0, 63) AS s;
UPDATE tributary_version_slots
   SET version = (SELECT version FROM tributary_state WHERE id = 1)
 WHERE slot = 0;

DROP TABLE tributary_state;
