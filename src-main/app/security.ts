/**
 * What the app's web pages may do beyond showing Gufo: nothing. Every web contents stays on the
 * app page (no navigation, no new windows, no <webview>); web links open in the user's browser;
 * every permission is refused except writing text to the clipboard, which the Copy buttons need.
 */
import { shell, type Session, type WebContents } from 'electron';

/** Chromium asks for it on each navigator.clipboard.writeText; it cannot read the clipboard. */
const CLIPBOARD_WRITE = 'clipboard-sanitized-write';

/** Refuses every permission request and check, but the clipboard write, and that only for the app page. */
export function refusePermissions(session: Session, isAppPage: (url: string) => boolean): void {
  session.setPermissionRequestHandler((contents, permission, callback) =>
    callback(permission === CLIPBOARD_WRITE && isAppPage(contents.getURL())),
  );
  session.setPermissionCheckHandler(
    (contents, permission) => permission === CLIPBOARD_WRITE && contents !== null && isAppPage(contents.getURL()),
  );
}

/** Keeps `contents` on the app page; a web link it tries to open goes to the system browser instead. */
export function keepOnAppPage(contents: WebContents, isAppPage: (url: string) => boolean): void {
  contents.on('will-navigate', (event) => {
    if (isAppPage(event.url)) return;
    event.preventDefault();
    openInBrowser(event.url);
  });
  contents.setWindowOpenHandler(({ url }) => {
    openInBrowser(url);
    return { action: 'deny' };
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** Whether `url` is the page at `appPage` (any hash or query: the router and the token live there). */
export function samePage(appPage: string): (url: string) => boolean {
  const page = new URL(appPage);
  return (url) => {
    if (!URL.canParse(url)) return false;
    const target = new URL(url);
    // file: URLs have the origin "null": compare the protocol, host and path instead.
    return target.protocol === page.protocol && target.host === page.host && target.pathname === page.pathname;
  };
}

function openInBrowser(url: string): void {
  // Only web pages: a file: or custom-scheme URL handed to the OS could launch a program.
  const protocol = URL.canParse(url) ? new URL(url).protocol : '';
  if (protocol === 'https:' || protocol === 'http:') void shell.openExternal(url);
}
