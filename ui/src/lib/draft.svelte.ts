// The draft of the workspace's definition that Settings → Objects and Users & permissions
// edit together: a copy of the deployed definition, previewed by the kernel (what it changes,
// what it does to the data) and deployed as one new generation, or discarded.
import { api, kernelError } from "./api";
import type { Error as KernelError } from "../bindings/Error";
import { copy } from "./definition";
import type { DeployPreview } from "../bindings/DeployPreview";
import type { DeployProgress } from "../bindings/DeployProgress";
import { ModelCall } from "./modelCall.svelte";
import type { WorkspaceDefinition } from "../bindings/WorkspaceDefinition";
import type { WorkspaceView } from "../bindings/WorkspaceView";

class Draft {
  definition = $state<WorkspaceDefinition | null>(null);
  /** The deployed definition the draft started from, as JSON. */
  private base = $state("");
  preview = $state<DeployPreview | null>(null);
  /** Why the draft cannot be previewed or deployed (its problems, with their JSON pointers). */
  error = $state<KernelError | null>(null);
  /** Why the definition could not be read (no metadata.deploy). */
  unavailable = $state<string | null>(null);
  busy = $state(false);
  /** The deploy running now (Cancel stops it with nothing changed), and its step. */
  running = $state<ModelCall<WorkspaceView, DeployProgress> | null>(null);
  progress = $state<DeployProgress | null>(null);
  /** The last deploy was cancelled (until the next edit or deploy). */
  cancelled = $state(false);
  /** The generation the last deploy from here made (until the next edit). */
  deployed = $state<number | null>(null);
  readonly changed = $derived(this.definition !== null && JSON.stringify(this.definition) !== this.base);

  /** The workspace file and the user the draft belongs to. */
  private owner = "";

  /**
   * On opening Settings: keep a draft not yet deployed of this same workspace and user, else
   * read the definition again (another user may not read it at all).
   */
  async open(path: string, user: string) {
    const owner = `${path}\n${user}`;
    if (owner === this.owner && this.changed) return;
    this.owner = owner;
    await this.load();
  }

  async load() {
    this.unavailable = null;
    try {
      const d = await api.workspaceDefinition();
      this.base = JSON.stringify(d);
      this.definition = copy(d);
      this.preview = null;
      this.error = null;
    } catch (e) {
      this.definition = null;
      this.unavailable = kernelError(e).message;
    }
  }

  /** Start over from what is deployed. */
  discard() {
    if (this.base) this.definition = JSON.parse(this.base) as WorkspaceDefinition;
    this.preview = null;
    this.error = null;
  }

  /** Any edit makes an earlier preview stale. */
  touched() {
    this.preview = null;
    this.error = null;
    this.deployed = null;
    this.cancelled = false;
  }

  async showPreview() {
    if (!this.definition) return;
    this.busy = true;
    this.error = null;
    try {
      this.preview = await api.previewDeploy(copy(this.definition));
    } catch (e) {
      this.preview = null;
      this.error = kernelError(e);
    } finally {
      this.busy = false;
    }
  }

  /** Deploy the previewed draft, its steps in `progress`, `running` cancellable; the workspace as it is afterwards, or null if refused or cancelled. */
  async deploy(force: boolean): Promise<WorkspaceView | null> {
    if (!this.definition) return null;
    const definition = copy(this.definition);
    this.busy = true;
    this.progress = null;
    this.cancelled = false;
    const call = new ModelCall<WorkspaceView, DeployProgress>(
      "deploy",
      (id, channel) => api.deployDefinition(id, definition, force, channel),
      (p) => (this.progress = p),
    );
    this.running = call;
    const outcome = await call.outcome;
    this.running = null;
    this.progress = null;
    this.busy = false;
    if ("failure" in outcome) {
      // A cancel the user asked for is said, not shown as a failure.
      if (outcome.failure.code === "cancelled") this.cancelled = true;
      else this.error = outcome.failure;
      return null;
    }
    await this.load();
    this.deployed = outcome.answer.generation;
    return outcome.answer;
  }
}

export const draft = new Draft();
