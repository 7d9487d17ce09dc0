package dev.sluice.bench.load;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProcStatTest
{
    @Test
    void splitsAfterTheLastParenthesisOfTheName()
    {
        String stat = "107 (kd (a) mon) S 2 0 0 0 -1 2129984 0 0 0 0 212 3 0 0 20 0 1 0 42\n";
        assertThat(ProcStat.name(stat)).isEqualTo("kd (a) mon");
        String[] fields = ProcStat.fieldsFromState(stat);
        assertThat(fields[3 - 3]).isEqualTo("S");
        assertThat(fields[4 - 3]).as("ppid").isEqualTo("2");
        assertThat(fields[14 - 3]).as("utime").isEqualTo("212");
        assertThat(fields[fields.length - 1]).isEqualTo("42");
    }

    @Test
    void aTextThatIsNotAStatLineHasNoFields()
    {
        assertThat(ProcStat.fieldsFromState("no name here")).isNull();
        assertThat(ProcStat.name("closed) before (open")).isNull();
    }
}
