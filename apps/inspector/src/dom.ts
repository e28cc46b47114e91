/** Small DOM helpers shared by the page's panels. */

export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

export const esc = (s: string): string => s.replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]!);

export function showMessage(kind: "error" | "info", html: string): void {
  const m = $("message");
  m.hidden = false;
  m.className = kind === "info" ? "info" : "";
  m.innerHTML = html;
}

export const clearMessage = (): void => {
  $("message").hidden = true;
};
