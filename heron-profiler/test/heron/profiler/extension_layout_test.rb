# frozen_string_literal: true

require "test_helper"

# The profiler's C offers primitives and Ruby drives them, as in io-event (issue 29): the C
# calls no Ruby method by name, each class is wholly Ruby or wholly C, and each C class has its
# own file and header declaring its Init_. Read from the source text.
class ExtensionLayoutTest < Minitest::Test
  ROOT = File.expand_path("../../../..", __dir__)
  EXT = File.join(ROOT, "heron-profiler/ext/heron_profiler")
  LIB = File.join(ROOT, "heron-profiler/lib")

  # The one call by name left: the Rack app's `call`, as a server makes it. Procs the Ruby side
  # hands over run through rb_proc_call_with_block.
  def test_the_c_calls_no_ruby_method_by_name
    calls = sources.flat_map do |file, text|
      text.scan(/rb_funcall\w*\(([^,]+),\s*(\w+)/).map { |receiver, method| "#{File.basename(file)}: #{receiver}, #{method}" }
    end
    assert_empty calls.grep_v(/: \S*->app, id_call\z/), "rb_funcall of a Ruby method by name"
    assert_empty sources.values.grep(/rb_(?:funcall_with_block|call_super|method_call|obj_send|send)\b/)
  end

  def test_each_c_class_has_its_file_and_its_header_declaring_its_init
    inits = sources.except(File.join(EXT, "profiler_ext.c")).map do |file, text|
      init = text[/^void (Init_Heron_Profiler_\w+)\(VALUE/, 1]
      header = file.sub(/\.c\z/, ".h")
      [File.basename(file), init, File.exist?(header) && File.read(header).include?("void #{init}(VALUE")]
    end
    assert_empty inits.reject { |_file, init, declared| init && declared }, "a C file without its Init_ or its header"
    assert_equal inits.size, inits.map { |_file, init, _| init }.uniq.size, "one C class a file"
  end

  # A class C defines has no Ruby methods: its lib file, when it has one, only documents it.
  def test_each_class_is_wholly_ruby_or_wholly_c
    c_classes.each do |path|
      file = File.join(LIB, "#{path.map { |name| snake(name) }.join('/')}.rb")
      next unless File.exist?(file)
      refute_match(/^\s*def /, File.read(file), "#{path.join('::')} is defined in C and given methods in #{file}")
    end
    assert_includes c_classes, %w[Heron Profiler Meter]
    assert_includes c_classes, %w[Heron Profiler ThreadAllocations]
  end

  private

  def sources
    Dir[File.join(EXT, "*.c")].sort.to_h { |file| [file, File.read(file)] }
  end

  # Constant paths of the classes and modules C defines methods on (rb_define_class_under or
  # rb_define_module_under with a method).
  def c_classes
    sources.values.flat_map do |text|
      next [] unless text.match?(/rb_define_(?:singleton_|private_|module_)?(?:method|function)\((?:klass|mod|module)\b/)
      names = text.scan(/rb_define_(?:class|module)_under\((\w+), "(\w+)"/).map(&:last)
      [%w[Heron Profiler] + names]
    end
  end

  def snake(name) = name.gsub(/([a-z\d])([A-Z])/, '\1_\2').gsub(/([A-Z]+)([A-Z][a-z])/, '\1_\2').downcase
end
