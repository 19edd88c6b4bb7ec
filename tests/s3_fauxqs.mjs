// tests/s3_fauxqs.mjs APP_JS PORTFILE: fauxqs's S3 server (an implementation of its own, on
// fastify, sharing no code with s3rver) on 127.0.0.1 only, a free port written to PORTFILE.
// tests/s3_server.sh starts it with APP_JS = fauxqs's dist/app.js (from .tools/, as s3rver):
// its own command line would listen on every address.
import { renameSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [appJs, portFile] = process.argv.slice(2);
const { buildApp } = await import(pathToFileURL(appJs).href);
const app = buildApp({ logger: false });
await app.listen({ port: 0, host: "127.0.0.1" });
writeFileSync(portFile + ".tmp", String(app.server.address().port));
renameSync(portFile + ".tmp", portFile);
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => app.close().then(() => process.exit(0)));
