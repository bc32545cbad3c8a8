// The authoring screen: evidence spans, autosave with a local backup, active time.
import { initActivity } from "./activity.js";
import { initAutosave } from "./autosave.js";
import { initSpans } from "./spans.js";

// Autosave first: it puts a restored backup (spans included) into the forms
// before the spans module draws chips and highlights from them.
initAutosave();
initSpans();
initActivity();
