import { render } from "solid-js/web";
import { App } from "./app.tsx";
import { claimTabIdentity } from "./storage/tab-identity.ts";
import { exposeClientId } from "./terminal/debug-hook.ts";
import "./styles.css";

const root = document.getElementById("app");
if (root === null) throw new Error("index.html has no #app element");
// Before anything connects: a duplicated tab must not attach under the original's ID.
const { clientId } = claimTabIdentity();
exposeClientId(clientId);
render(() => <App clientId={clientId} />, root);
