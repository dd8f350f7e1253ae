-- Tributary quickstart: a profile, source and sink tables, and plans over them.
-- Run it with: cargo run -p tributary-cli -- run examples/quickstart.sql

-- validate = false stores the profile without connecting: the quickstart needs no broker.
-- Drop it to have the connection tested first (TEST CONNECTION PROFILE does so later).
CREATE CONNECTION PROFILE IF NOT EXISTS local_kafka WITH (
    connector = 'kafka',
    bootstrap_servers = 'localhost:9092',
    'schema_registry.endpoint' = 'http://localhost:8081',
    validate = false
);

CREATE TABLE IF NOT EXISTS orders (
    order_id BIGINT NOT NULL,
    customer_id BIGINT NOT NULL,
    amount DOUBLE NOT NULL,
    event_time TIMESTAMP NOT NULL,
    partition INT METADATA FROM 'partition',
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
    connector = 'kafka',
    connection_profile = 'local_kafka',
    topic = 'orders',
    type = 'source',
    'source.offset' = 'latest',
    format = 'json'
);

CREATE TABLE IF NOT EXISTS customer_totals (
    customer_id BIGINT NOT NULL,
    total DOUBLE
) WITH (
    connector = 'kafka',
    connection_profile = 'local_kafka',
    topic = 'customer_totals',
    type = 'sink',
    format = 'json'
);

SHOW CONNECTION PROFILES;
SHOW TABLES;
DESCRIBE orders;
SHOW CREATE TABLE orders;

EXPLAIN SELECT customer_id, SUM(amount) AS total
FROM orders
GROUP BY customer_id, TUMBLE(event_time, INTERVAL '1' HOUR);

EXPLAIN INSERT INTO customer_totals
SELECT customer_id, SUM(amount) AS total
FROM orders
GROUP BY customer_id, tumble(INTERVAL '1' HOUR);

-- Queries read sources. A generator needs no broker, so these run anywhere: five rows,
-- then an aggregate over a source that ends after 1,000 rows. (A source that never ends
-- needs a LIMIT, or SET preview.max_rows = 1000 to bound every read.)
CREATE TABLE IF NOT EXISTS ticks WITH (
    connector = 'impulse',
    event_rate = '0',
    message_count = '1000'
);

SELECT counter, subtask_index FROM ticks LIMIT 5;

SELECT count(*) AS ticks, sum(counter) AS total, max(counter) AS last FROM ticks;
