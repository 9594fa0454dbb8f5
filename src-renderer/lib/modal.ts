/**
 * Svelte action for a <dialog>: shown as a modal (focus trapped, Esc closes, the page inert) while
 * `open` is true, closed when it turns false. The dialog's own 'close' event reports Esc.
 *
 *   <dialog use:modal={open} onclose={onclose}>…</dialog>
 */
export function modal(dialog: HTMLDialogElement, open: boolean) {
  const apply = (show: boolean) => {
    if (show && !dialog.open) dialog.showModal();
    else if (!show && dialog.open) dialog.close();
  };
  apply(open);
  return { update: apply };
}
