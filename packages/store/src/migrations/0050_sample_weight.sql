-- Head sampling: how many requests a kept span (and the request rollup of its trace) stands for,
-- 1 ÷ the sampling probability (OTel's `th` in tracestate, or sampling.service_ratios). NULL = 1.
ALTER TABLE span_store ADD COLUMN IF NOT EXISTS sample_weight DOUBLE;
ALTER TABLE request_facts ADD COLUMN IF NOT EXISTS sample_weight DOUBLE;
-- Where a request went (host): the runtime's own address, or the pod a client call picked; a
-- request that failed before any runtime keeps the pool of the pod it was sent to.
ALTER TABLE span_store ADD COLUMN IF NOT EXISTS endpoint VARCHAR;
ALTER TABLE request_facts ADD COLUMN IF NOT EXISTS endpoint VARCHAR;
