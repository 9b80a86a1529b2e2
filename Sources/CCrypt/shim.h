// libcrypt (libxcrypt): crypt_r and crypt_gensalt_rn for the passcode hash (yescrypt).
#include <crypt.h>
