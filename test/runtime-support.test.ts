/** Which Node.js may run sqlscribe: Node-API 10 (Node 22.14 and later), asked before any database is opened. */
import t from 'tap';
import { runtimeRefusal } from '../src/runtime-support';

t.test('Node 24 and 22.14 run it; Node 20 and early 22 are refused with the reason', async (tt) => {
  tt.equal(runtimeRefusal({ node: '24.21.0', napi: '10' }), null);
  tt.equal(runtimeRefusal({ node: '22.23.3', napi: '10' }), null);
  tt.equal(runtimeRefusal({ node: '25.0.0', napi: '11' }), null);
  tt.match(
    runtimeRefusal({ node: '20.20.2', napi: '9' }),
    /Node\.js 20\.20\.2 is too old \(Node-API 9; the SQLite engine needs 10\): use Node\.js 24 LTS, or 22\.14 at least/,
  );
  tt.match(runtimeRefusal({ node: '22.13.1', napi: '9' }), /too old/);
  tt.match(runtimeRefusal({ node: '18.0.0' }), /Node-API unknown/);
});

t.test('the Node running this test is one sqlscribe supports', async (tt) => {
  tt.equal(runtimeRefusal(process.versions), null, `this suite runs on ${process.version}: use scripts/use-node.sh`);
});
