# frozen_string_literal: true

module Heron
  module Upgrade
    # Raised into the fiber of an upgraded connection that waits for its client in its fiber (it
    # cannot park: TLS, no epoll, parking off) when its close began from outside (another
    # connection's callback, or another thread): it stops waiting for its ping deadline and waits
    # for its client's close frame until its close deadline instead (see Session#open).
    class CloseBegan < StandardError
    end
  end
end
