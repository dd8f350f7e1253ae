-- Tributary catalog, schema version 1: profiles, tables, views and declared functions.
-- Records are the same JSON documents the embedded (sled) store keeps; the columns
-- beside them are the indexes the catalog looks things up by. Keys compare bytewise
-- (COLLATE "C"), so every listing comes out in the order the embedded store gives.

CREATE TABLE tributary_state (
    id integer PRIMARY KEY CHECK (id = 1),
    -- Bumped by every committed batch; caches compare it, and every writer locks this
    -- row first, so batches from all processes commit one after another.
    version bigint NOT NULL
);
INSERT INTO tributary_state (id, version) VALUES (1, 0);

CREATE TABLE tributary_profiles (
    id text COLLATE "C" PRIMARY KEY,
    -- The lowercase name: names are unique case-insensitively, as Arroyo's are.
    name_key text COLLATE "C" NOT NULL UNIQUE DEFERRABLE INITIALLY DEFERRED,
    record text NOT NULL
);

CREATE TABLE tributary_tables (
    id text COLLATE "C" PRIMARY KEY,
    name_key text COLLATE "C" NOT NULL UNIQUE DEFERRABLE INITIALLY DEFERRED,
    name text NOT NULL,
    -- No table may outlive its profile, whatever process drops it.
    profile_id text COLLATE "C" REFERENCES tributary_profiles (id) DEFERRABLE INITIALLY DEFERRED,
    created_at bigint NOT NULL,
    record text NOT NULL
);
CREATE INDEX tributary_tables_by_profile ON tributary_tables (profile_id);
CREATE INDEX tributary_tables_by_created ON tributary_tables (created_at DESC, id DESC);

CREATE TABLE tributary_definitions (
    -- 'r:' or 'f:' and the lowercase name (a view, or a declared function).
    key text COLLATE "C" PRIMARY KEY,
    record text NOT NULL
);

CREATE TABLE tributary_readers (
    -- What is read ('r:name' or 'f:name') and the key of the definition reading it.
    dependency text COLLATE "C" NOT NULL,
    reader text COLLATE "C" NOT NULL,
    PRIMARY KEY (dependency, reader)
);
