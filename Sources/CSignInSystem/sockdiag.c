#define _GNU_SOURCE
#include "csystem.h"
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int signin_tcp_socket_uid(int family, const void *local_addr, unsigned short local_port,
                          const void *remote_addr, unsigned short remote_port, unsigned int *uid, unsigned char *state) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 r;
    } req;
    memset(&req, 0, sizeof req);
    req.nlh.nlmsg_len = sizeof req;
    req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nlh.nlmsg_flags = NLM_F_REQUEST;  /* one socket, by its exact identity: no dump */
    req.r.sdiag_family = (unsigned char)family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = ~0U;
    req.r.id.idiag_sport = htons(local_port);
    req.r.id.idiag_dport = htons(remote_port);
    size_t len = family == AF_INET ? 4 : 16;
    memcpy(req.r.id.idiag_src, local_addr, len);
    memcpy(req.r.id.idiag_dst, remote_addr, len);
    req.r.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    char buf[8192];
    ssize_t n;
    do n = recv(fd, buf, sizeof buf, 0); while (n < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (n < 0) { errno = e; return -1; }
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
        if (h->nlmsg_type == NLMSG_ERROR) {
            struct nlmsgerr *err = NLMSG_DATA(h);
            if (err->error == -ENOENT) return 1;
            errno = -err->error;
            return -1;
        }
        if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
            struct inet_diag_msg *m = NLMSG_DATA(h);
            *uid = m->idiag_uid;
            *state = m->idiag_state;
            return 0;
        }
    }
    return 1;
}
