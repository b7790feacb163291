// Small inline SVG icons: the page loads no icon font and no image.
export function ForkIcon() {
  return (
    <svg className="icon" width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <circle cx="4" cy="3" r="1.6" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <circle cx="12" cy="3" r="1.6" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <circle cx="8" cy="13" r="1.6" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <path d="M4 4.6v1.4c0 2 4 2.5 4 5.4M12 4.6v1.4c0 2-4 2.5-4 5.4" fill="none" stroke="currentColor" strokeWidth="1.4" />
    </svg>
  );
}
