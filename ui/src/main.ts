import { mount } from "svelte";
import "./lib/theme.css";
import App from "./App.svelte";
import { applyTheme, savedTheme } from "./lib/theme";

// The theme chosen on this computer, before the first paint.
applyTheme(savedTheme());

const app = mount(App, { target: document.getElementById("app")! });

export default app;
