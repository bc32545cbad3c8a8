// Active time on the review screen, measured and sent exactly as on the authoring screen.
import { initActivity } from "./activity.js";

initActivity();
