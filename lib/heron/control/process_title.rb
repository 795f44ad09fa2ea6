# frozen_string_literal: true

module Heron
  module Control
    # Process titles that say what each Heron process is, as `ps` users expect from Puma:
    # `heron master [tag] tcp://…`, `heron worker 1 [tag]`, `heron single [tag] tcp://…`.
    module ProcessTitle
      module_function

      # @param role [String] "master", "worker 1" or "single".
      # @param config [Configuration] reads `tag` (default: the working directory's name).
      # @param addresses [Array<String>] the listeners, for the master's and single process's title.
      # @return [String] the title set.
      def set(role, config, addresses = [])
        title = ["heron #{role}", "[#{tag(config)}]", *addresses].join(" ")
        Process.setproctitle(title)
        title
      end

      # @param config [Configuration]
      # @return [String]
      def tag(config)
        config.tag || File.basename(Dir.pwd)
      end
    end
  end
end
