-- An Arroyo pipeline script, in the style of Arroyo's tutorials: clicks arrive on Kafka,
-- views clean them up, a windowed aggregate counts them per page, a lookup join adds
-- the page's owner from Redis, and the result goes to a Kafka topic. Check it offline:
--
--     tributary check examples/arroyo_pipeline.sql
--
-- (nothing connects: the profiles say validate = false, and check never connects).

CREATE CONNECTION PROFILE local_kafka WITH (
    connector = 'kafka',
    bootstrap_servers = 'localhost:9092',
    validate = false
);

CREATE CONNECTION PROFILE local_redis WITH (
    connector = 'redis',
    address = 'redis://localhost:6379',
    validate = false
);

CREATE TABLE clicks (
    user_id BIGINT NOT NULL,
    page TEXT NOT NULL,
    referrer TEXT,
    ts TIMESTAMP NOT NULL,
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
    connector = 'kafka',
    connection_profile = 'local_kafka',
    topic = 'clicks',
    type = 'source',
    format = 'json',
    'source.offset' = 'latest'
);

-- Who owns each page, kept in Redis under page:<name>.
CREATE TEMPORARY TABLE page_owners (
    page_key TEXT METADATA FROM 'key' PRIMARY KEY,
    owner TEXT
) WITH (
    connector = 'redis',
    connection_profile = 'local_redis',
    format = 'json'
);

CREATE TABLE page_counts (
    window_start TIMESTAMP,
    page TEXT,
    owner TEXT,
    clicks BIGINT
) WITH (
    connector = 'kafka',
    connection_profile = 'local_kafka',
    topic = 'page_counts',
    type = 'sink',
    format = 'json'
);

-- Views over the source: drop bots, normalise the page.
CREATE VIEW human_clicks AS
SELECT user_id, lower(page) AS page, ts
FROM clicks
WHERE referrer IS NULL OR referrer NOT LIKE '%bot%';

-- A windowed aggregate: clicks per page per minute (a view of a view).
CREATE VIEW clicks_per_minute AS
SELECT tumble(INTERVAL '1' MINUTE) AS w, page, count(*) AS clicks
FROM human_clicks
GROUP BY w, page;

-- The result, enriched by a lookup join on the lookup table's key, into the sink.
INSERT INTO page_counts
SELECT c.w.start, c.page, o.owner, c.clicks
FROM clicks_per_minute c
LEFT JOIN page_owners o ON concat('page:', c.page) = o.page_key;
