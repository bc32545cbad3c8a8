// The authoring screen: evidence spans, autosave with a local backup, signing in again
// mid-edit, keys, live counts, the guidelines panel, active time.
import { initActivity } from "./activity.js";
import { initAutosave } from "./autosave.js";
import { initCounters } from "./counters.js";
import { initKeys } from "./keys.js";
import { initLeadClearance } from "./lead_clearance.js";
import { initPanels } from "./panels.js";
import { initSession } from "./session.js";
import { initSpans } from "./spans.js";
import { initVerify } from "./verify.js";

// Autosave first: it puts a restored backup (spans included) into the forms
// before the spans module draws chips and highlights from them.
initSession();
initAutosave();
initSpans();
initKeys();
initCounters();
initPanels();
initVerify();
initActivity();
initLeadClearance();
