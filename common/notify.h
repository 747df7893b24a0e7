/* notify.h: systemd's service notification protocol (sd_notify) and watchdog settings,
 * without libsystemd.
 *
 * A notification is one datagram with "VAR=value" lines sent to the AF_UNIX socket named
 * by $NOTIFY_SOCKET: a path ("/run/systemd/notify") or an abstract name ("@name"). The
 * states stereod sends: "READY=1" once the GPU and every pair are up, "WATCHDOG=1" from
 * the frame loop, "STATUS=..." (free text, shown by systemctl status), "RELOADING=1" and
 * "STOPPING=1". systemd reads the sender's credentials: send from the main process.
 *
 * Every call reads the environment again and opens, uses and closes its own socket
 * (SOCK_CLOEXEC), as sd_notify() does: thread safe as long as nobody changes the
 * environment concurrently, a few syscalls per call, meant for a few calls per second.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Sends `state`. Returns 1 when sent, 0 when $NOTIFY_SOCKET is unset or empty (not run
 * by systemd: nothing to do), or a negative errno: -EAFNOSUPPORT for an address that is
 * neither a path nor '@'-abstract (e.g. "vsock:"), -EINVAL for one too long for
 * sockaddr_un, or what socket()/sendto() failed with (-ENOENT, -ECONNREFUSED, ...). */
int stereod_notify(const char *state);

/* printf-style stereod_notify(). */
int stereod_notifyf(const char *format, ...) G_GNUC_PRINTF(1, 2);

/* The watchdog timeout systemd set (WatchdogSec=), in microseconds: $WATCHDOG_USEC when
 * it is a positive integer and $WATCHDOG_PID is unset or this process's pid; otherwise 0
 * (no watchdog for us). */
guint64 stereod_watchdog_timeout_us(void);

/* The recommended interval between "WATCHDOG=1" pings: half the timeout, 0 when there
 * is no watchdog. */
guint64 stereod_watchdog_interval_us(void);

G_END_DECLS
