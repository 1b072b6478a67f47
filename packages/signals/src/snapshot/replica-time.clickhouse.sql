-- Fragment: replica-time per (bucket, pool), as replica_time in replica-gauge.sql (which documents
-- both sources): a pool's `governor.pool.replicas` gauge as a step function, else each of its pods'
-- scrape targets as a series of its own.
            SELECT bucket, pool, toFloat64(replica_ns) AS replica_ns, toInt64(covered_ns) AS covered_ns
            FROM (
              SELECT bucket, pool, sum(value * overlap) AS replica_ns, sum(overlap) AS covered_ns
              FROM (
                SELECT
                  b AS bucket, pool, seg_start, seg_end, value AS value,
                  $from_ns + b * $step_ns AS b_start,
                  least($from_ns + (b + 1) * $step_ns, $to_ns) AS b_end,
                  least(seg_end, b_end) - greatest(seg_start, b_start) AS overlap
                FROM (
                  SELECT
                    *,
                    assumeNotNull(if(seg_start <= $from_ns, toInt64(0), intDiv(seg_start - $from_ns, $step_ns))) AS lo,
                    assumeNotNull(if(seg_end <= $from_ns, toInt64(-1), intDiv(least(seg_end, $to_ns) - $from_ns - 1, $step_ns))) AS hi
                  FROM (
                    SELECT
                      pool,
                      pts[i].1 AS t,
                      pts[i].2 AS value,
                      if(i = 1, t - least($stale_ns, if(length(pts) > 1, pts[2].1 - t, $stale_ns)), t) AS seg_start,
                      least(least(if(i < length(pts), pts[i + 1].1, $to_ns), t + $stale_ns), $to_ns) AS seg_end
                    FROM (
                      SELECT pool, arraySort(x -> x.1, groupArray((time_ns, v))) AS pts
                      FROM (
                        -- No alias may repeat a column's name: ClickHouse would read the alias in WHERE.
                        SELECT pool, time_ns, max(value) AS v
                        FROM {{database}}.metric_store FINAL
                        WHERE name = 'governor.pool.replicas' AND pool IS NOT NULL AND value IS NOT NULL
                          AND time_ns >= $from_ns - $stale_ns AND time_ns < $to_ns + $stale_ns
                        GROUP BY pool, time_ns
                      )
                      GROUP BY pool
                    )
                    ARRAY JOIN arrayEnumerate(pts) AS i
                  )
                )
                ARRAY JOIN arrayMap(k -> lo + k, range(toUInt64(greatest(hi - lo + 1, toInt64(0))))) AS b
                WHERE overlap > 0
              )
              GROUP BY bucket, pool
            )
            UNION ALL
            SELECT bucket, pool, toFloat64(replica_ns) AS replica_ns, toInt64(covered_ns) AS covered_ns
            FROM (
              SELECT
                bucket,
                pool,
                sum(overlap) AS replica_ns,
                -- The part of the bucket in which the pool had any pod: from its first pod segment to its last.
                max(least(seg_end, b_end)) - min(greatest(seg_start, b_start)) AS covered_ns
              FROM (
                SELECT
                  b AS bucket, pool, seg_start, seg_end, 1 AS value,
                  $from_ns + b * $step_ns AS b_start,
                  least($from_ns + (b + 1) * $step_ns, $to_ns) AS b_end,
                  least(seg_end, b_end) - greatest(seg_start, b_start) AS overlap
                FROM (
                  SELECT
                    *,
                    assumeNotNull(if(seg_start <= $from_ns, toInt64(0), intDiv(seg_start - $from_ns, $step_ns))) AS lo,
                    assumeNotNull(if(seg_end <= $from_ns, toInt64(-1), intDiv(least(seg_end, $to_ns) - $from_ns - 1, $step_ns))) AS hi
                  FROM (
                    SELECT
                      pool,
                      ts[i] AS t,
                      if(i > 1, t - ts[i - 1], NULL) AS gap_before,
                      if(i < length(ts), ts[i + 1] - t, NULL) AS gap_after,
                      -- On ClickHouse 18.16 `0 AND NULL` is NULL (not false) and if() with a NULL
                      -- condition gives NULL (DuckDB's CASE takes the ELSE branch): each test that may
                      -- meet a NULL says through ifNull what NULL means.
                      if(ifNull(gap_before > $stale_ns, 1),
                        t - least($stale_ns, ifNull(gap_after, $stale_ns)), t) AS seg_start,
                      least(
                        if(ifNull(gap_after <= $stale_ns, 0),
                          t + ifNull(gap_after, 0), t + least($stale_ns, ifNull(gap_before, $stale_ns))),
                        $to_ns
                      ) AS seg_end
                    FROM (
                      SELECT pool, replica, arraySort(groupUniqArray(time_ns)) AS ts
                      FROM {{database}}.metric_store FINAL
                      WHERE name IN ('up', 'vllm:num_requests_running', 'sglang:num_running_reqs')
                        AND pool IS NOT NULL AND replica IS NOT NULL
                        AND time_ns >= $from_ns - $stale_ns AND time_ns < $to_ns + $stale_ns
                        AND pool GLOBAL NOT IN (
                          SELECT pool FROM {{database}}.metric_store
                          WHERE name = 'governor.pool.replicas' AND pool IS NOT NULL AND value IS NOT NULL
                            AND time_ns >= $from_ns - $stale_ns AND time_ns < $to_ns + $stale_ns
                        )
                      GROUP BY pool, replica
                    )
                    ARRAY JOIN arrayEnumerate(ts) AS i
                  )
                )
                ARRAY JOIN arrayMap(k -> lo + k, range(toUInt64(greatest(hi - lo + 1, toInt64(0))))) AS b
                WHERE overlap > 0
              )
              GROUP BY bucket, pool
            )
