# frozen_string_literal: true

module Heron
  module Config
    # One setting, declared once in {Settings::ALL}: everything Configuration, the CLI, the DSL
    # and docs/configuration.md need to know about it.
    #
    # - `name`, `default`, `type` (a {Types} method and its extra arguments);
    # - `group`: the docs section it is listed in;
    # - `directive`: how the config file sets it: `:value` (`name VALUE`), `:switch`
    #   (`name` or `name false`), `:list` (`name A, B`), `:custom` (a method written in {DSL}),
    #   or nil (no directive: set from Ruby only);
    # - `usage`, `shown` (the default as the docs show it) and `doc`: its docs row;
    # - `flags` and `help`: its command-line switches and their help, when it has any;
    # - `also`: further docs rows for directives that write into it (`ssl_bind` for binds);
    # - `owner`: nil for the server's own settings, a gem's name ("heron-profiler") for those a
    #   plugin declares (see {Settings::PLUGINS}).
    Setting = Struct.new(:name, :default, :type, :group, :directive, :usage, :shown, :doc, :flags, :help, :also, :owner,
                         keyword_init: true) do
      # @return [String] the config-file directive's name (the setting's, unless the usage says
      #   otherwise, as `continue` for continue_mode).
      def directive_name = usage ? usage[/\A\w+[!?]?/] : name.to_s

      # @return [String] the help line for `heron --help`, with the default.
      def help_line = "#{help} (default #{shown.delete('`')})"

      # @return [Array<String>] its rows in the docs' table: directive, flag, default, what.
      def rows
        flag = flags ? flags.map { |switch| "`#{switch}`" }.join(", ") : ""
        [[usage, flag, shown, doc], *Array(also).map { |usage, shown, doc| [usage, "", shown, doc] }]
      end
    end
  end
end
