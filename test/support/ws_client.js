// A real WebSocket client for the tests: node's `ws` package (bin/setup installs it into
// tmp/node). Connects to argv[2], sends text, a 200 KB binary message and a ping, waits for
// their echoes and the pong, then closes with 4001 and prints one JSON line of what it saw.
const path = require("path");
const WebSocket = require(path.join(__dirname, "../../tmp/node/node_modules/ws"));

const seen = { messages: [], pong: null, close: null, error: null };
const binary = Buffer.alloc(200 * 1024, 7);
const ws = new WebSocket(process.argv[2]);
const done = () => { console.log(JSON.stringify(seen)); process.exit(0); };
setTimeout(() => { seen.error = "timed out"; done(); }, 20000);

ws.on("open", () => {
  ws.send("héllo from ws");
  ws.send(binary);
  ws.ping(Buffer.from("are you there"));
});
ws.on("pong", (data) => { seen.pong = data.toString(); });
ws.on("message", (data, isBinary) => {
  seen.messages.push(isBinary ? { binary: data.length, intact: Buffer.compare(data, binary) === 0 } : data.toString());
  if (seen.messages.length === 3) ws.close(4001, "done");
});
ws.on("close", (code, reason) => { seen.close = [code, reason.toString()]; done(); });
ws.on("error", (error) => { seen.error = String(error); done(); });
