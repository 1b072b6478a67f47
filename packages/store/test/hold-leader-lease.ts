// A node that only holds the leader lease, for the failover test: prints "leader" when it holds it.
import { startLeaderLease } from '../src/postgres/leader-lease.ts';

const [connectionString, name, intervalMs] = process.argv.slice(2);
startLeaderLease({
  connectionString: connectionString!,
  name: name!,
  intervalMs: Number(intervalMs),
  onChange: (leader) => process.stdout.write(leader ? 'leader\n' : 'follower\n'),
});
