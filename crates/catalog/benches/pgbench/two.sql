SELECT 1;
INSERT INTO bench_t VALUES (repeat('x', 1500));
