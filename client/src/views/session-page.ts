import type { Api } from "../api.ts";
import type { Theme } from "../storage/theme.ts";

/** What every page of one session (its terminal, its chat) gets from the app. */
export type SessionPageProps = {
  api: Api;
  sessionId: string;
  clientId: string;
  label: () => string;
  theme: Theme;
  onBack: () => void;
};
