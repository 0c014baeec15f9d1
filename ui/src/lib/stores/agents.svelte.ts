// The agents' calls on the open project (`loupe mcp`): the list, polled
// while a project is open; one call open in the inspector, with what the
// user had before it; knobs saved for agents.

import type { AgentRequestDetailDto, AgentRequestDto, KnobsDto } from '../backend';
import { BackendError } from '../backend';
import type { Loupe } from './loupe.svelte';

/** How often the agents' calls are looked for while a project is open
 * (a cheap check: the log is re-read only when its files changed). */
const AGENT_POLL_MS = 1500;

/** An agent's call open in the inspector, and what the user had before it. */
export type AgentView = {
  detail: AgentRequestDetailDto;
  saved: { question: string; draft: string; knobs: KnobsDto };
  note: string;
};

export class AgentsStore {
  private readonly app: Loupe;
  /** The log's version last read (nothing is re-sent while it is current). */
  private version: string | null = null;
  /** Newest first. */
  requests = $state<AgentRequestDto[]>([]);
  /** Log lines that did not decode. */
  skipped = $state(0);
  /** Whether knobs are saved for agents. */
  agentKnobs = $state(false);
  error = $state<string | null>(null);
  /** The list is shown. */
  open = $state(false);
  /** Calls newer than this were made since the list was last looked at. */
  private seenAt = $state(0);
  view = $state<AgentView | null>(null);
  unseen = $derived(this.open ? 0 : this.requests.filter((r) => r.time_ms > this.seenAt).length);
  private poll: ReturnType<typeof setInterval> | undefined;

  constructor(app: Loupe) {
    this.app = app;
  }

  /** Another project: nothing of the previous one's agents. */
  clear() {
    this.view = null;
    this.version = null;
    this.requests = [];
    this.skipped = 0;
    this.agentKnobs = false;
    this.error = null;
  }

  /** Look for `root`'s calls now and every AGENT_POLL_MS. */
  follow(root: string) {
    clearInterval(this.poll);
    void this.pollOnce(root);
    this.poll = setInterval(() => void this.pollOnce(root), AGENT_POLL_MS);
  }

  stop() {
    clearInterval(this.poll);
  }

  /** Hear about the agents' new calls (nothing is re-sent while the log is unchanged). */
  private async pollOnce(root: string) {
    const { backend, project } = this.app;
    if (!backend || project.status?.root !== root) return;
    try {
      const r = await backend.agentRequests(root, this.version);
      if (project.status?.root !== root) return;
      if (r.changed) {
        this.version = r.version;
        this.requests = r.requests;
        this.skipped = r.skipped;
      }
      this.agentKnobs = r.agent_knobs;
      this.error = null;
    } catch (e) {
      if (project.status?.root === root) this.error = BackendError.from(e).message;
    }
  }

  toggle = () => {
    this.open = !this.open;
    this.seenAt = Math.max(this.seenAt, ...this.requests.map((r) => r.time_ms));
  };

  /** Show an agent's call in the inspector: its question, knobs, pins and bans. */
  openRequest = async (id: string) => {
    const { backend, project, knobs, question } = this.app;
    if (!backend || !project.status || !knobs.values) return;
    try {
      const found = await backend.agentRequest(project.status.root, id);
      const saved = this.view?.saved ?? { question: question.text, draft: question.draft, knobs: $state.snapshot(knobs.values) };
      question.cancelTyping();
      this.app.assembly.detail = null;
      this.view = { detail: found, saved, note: '' };
      knobs.values = found.knobs;
      question.draft = found.request.question;
      question.text = found.request.question;
    } catch (e) {
      this.app.fail(e);
    }
  };

  /** Back to the user's own question and knobs. */
  close = () => {
    if (!this.view) return;
    const { saved } = this.view;
    this.view = null;
    this.app.assembly.detail = null;
    this.app.knobs.values = saved.knobs;
    this.app.question.draft = saved.draft;
    this.app.question.text = saved.question;
  };

  /** Make the knobs on screen what agents' calls on this project start from (`forget`: stop). */
  saveKnobs = async (forget: boolean) => {
    const { backend, project, knobs } = this.app;
    if (!backend || !project.status || !knobs.values) return;
    try {
      await backend.saveAgentKnobs(project.status.root, forget ? null : $state.snapshot(knobs.values));
      this.agentKnobs = !forget;
      if (this.view) {
        this.view.note = forget ? '' : "Saved: the agent's next calls on this project start from these knobs (its own arguments still win).";
      }
    } catch (e) {
      this.app.fail(e);
    }
  };
}
